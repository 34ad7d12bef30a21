"""Agents: one subpackage per family, one module per method; importing registers them."""
