"""Embedded simulator."""
