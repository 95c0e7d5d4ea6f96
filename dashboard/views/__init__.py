"""Page bodies. Each module has ``render()``; ``dashboard/pages/*.py`` are one-line entry
files so Streamlit's multipage navigation (and AppTest.switch_page) can address them."""
