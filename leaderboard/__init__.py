"""Results store, scoring, claims and renderers; the published tables live in published/."""
