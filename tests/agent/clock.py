"""The fixed "now" of the agent tests (the generated reports are around this day)."""

from datetime import datetime

from tansaku.text.dates import TOKYO

NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
