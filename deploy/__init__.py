"""Deployment: nginx in front of several app processes (``deploy/run-local``, ``deploy/compose.yaml``)."""
