"""lockscope: why a filesystem stops scaling when threads are added."""

__version__ = "0.1.0"
