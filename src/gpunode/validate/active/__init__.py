"""Active checks: test workloads created through the API, judged, and always deleted."""
