"""The front doors: the `kafka-chaos` command line (cli.py) and the pytest plugin
(pytest_plugin.py). Both parse what a user asked for and hand it to runs/."""
