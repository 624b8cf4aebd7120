"""Command-line tools: `rouba-train`, `rouba-evaluate`, `rouba-play`, `rouba-benchmark` (the top layer)."""
