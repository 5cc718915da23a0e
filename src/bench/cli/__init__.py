"""The command line around a job: argv checks before Hydra writes anything, Hydra callbacks, the lines a
job prints when it ends or fails, and the secrets it keeps out of its files (the commands themselves are
the root modules, ``python -m bench.<command>``)."""
