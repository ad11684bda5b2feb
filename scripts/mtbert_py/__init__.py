"""Python helpers shared by mtbert's scripts: checkpoint conversion, test fixtures and run figures."""
