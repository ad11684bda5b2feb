"""Python helpers shared by mtbert's scripts: checkpoint conversion and test fixtures."""
