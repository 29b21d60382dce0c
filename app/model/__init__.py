"""The model: the bottom layer of the app, importing neither Panel nor Bokeh nor anything above it.

``core`` is the mathematics (pure NumPy, split by topic), ``state`` one session's every choice and its
constraints (param), ``strings`` and ``prose`` the two languages' text, read from data files.
"""
