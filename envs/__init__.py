"""Problem families: one subpackage per family; importing it registers its problems."""
