"""The pack rendered: its pages (`pages.py`: JSON, Markdown, HTML from `templates/`, the manifest), its
charts (`charts.py`, which tables feed which plot) and `svg.py` (matplotlib to inline SVG)."""
