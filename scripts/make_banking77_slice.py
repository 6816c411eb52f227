"""Write examples/data/banking77_slice.csv: the first 25 test queries of 8 BANKING77 intents.

BANKING77 (Casanueva et al. 2020), CC-BY 4.0; see examples/data/BANKING77_ATTRIBUTION.md.
Run with the shared data beside the checkout (or give the test.csv path):
    python scripts/make_banking77_slice.py [PATH/TO/banking77/test.csv]
"""

import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared" / "data" / "banking77" / "test.csv"
TARGET = REPO / "examples" / "data" / "banking77_slice.csv"
INTENTS = (
    "card_arrival", "lost_or_stolen_card", "exchange_rate", "card_payment_wrong_exchange_rate",
    "top_up_failed", "declined_card_payment", "change_pin", "pending_transfer",
)  # fmt: skip
PER_INTENT = 25


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE
    with source.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    kept = []
    for intent in INTENTS:
        kept += [row for row in rows if row["category"] == intent][:PER_INTENT]
    with TARGET.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", "label"])
        for number, row in enumerate(kept, start=1):
            writer.writerow([f"b77-{number:03d}", row["text"].strip(), row["category"]])
    print(f"wrote {len(kept)} items over {len(INTENTS)} intents to {TARGET}")


if __name__ == "__main__":
    main()
