"""report: `make report`, the report and figures re-derived from a measured
run (it never measures):

  report      the driver: python3 -m report.report -> report/linux.md
  figures     the SVG and PNG figures: python3 -m report.figures
  quicklook   terminal plots at the end of `make measure`: python3 -m report.quicklook
  common      the meta.json reader, the field getters, formatting
  sections/   one module per study: its row reader and its section

Every entry point runs as a module from the repository's top.
"""
