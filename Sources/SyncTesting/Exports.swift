// Tests start programs with the project's one launcher (``ChildProcess``): `import SyncTesting` brings it.
@_exported import LocalSystem
