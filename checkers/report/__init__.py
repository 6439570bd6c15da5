"""What the check draws for a person: report.html (page.py, its plots series.py and svg.py), the
lost writes' root causes (root_cause.py), and `trend` over many run directories (trend.py)."""
