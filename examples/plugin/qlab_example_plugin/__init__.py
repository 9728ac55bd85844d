"""An example qlab plugin package: the ``content_type`` assertion type and the ``tap`` report format."""
