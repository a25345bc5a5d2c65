"""Drawing: figures (``viz``) and slider figures that work everywhere (``widgets``)."""
