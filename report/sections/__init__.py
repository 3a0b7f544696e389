"""report/sections: one module per study (or per row format two studies share):
its row dataclasses, its one row reader and its markdown section. report.py
puts them in order; figures.py and quicklook.py read rows through them."""
