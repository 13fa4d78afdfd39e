"""Built-in ssrisk rules, each a plugin registered through the ``ssrisk.rules`` entry point group."""
