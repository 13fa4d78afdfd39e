"""Inputs that must be rendered before they can be checked: Helm charts, kustomizations and
rendered streams on standard input.

``inputs`` decides what each PATH is and loads it; ``helm`` and ``kustomize`` run the
renderers; ``locate`` points fields of rendered objects back at the files users edit;
``common`` holds what they share.
"""
