"""Built-in ssrisk rules.

Each module is a plugin registered through the ``ssrisk.rules`` entry point group.
"""
