"""Generate the small CSV datasets used by the ``dataqa`` question suite.

Running ``python make_data.py`` writes ``sales.csv``, ``stores.csv``,
``weather.csv`` and ``survey.csv`` into the ``data/`` folder beside this
file. The CSVs in ``data/`` are the output of this script; the generator is
deterministic (fixed seed, standard library only), so re-running it
reproduces them byte for byte.
"""

import csv
import datetime
import random
from pathlib import Path

SEED = 20250601
DATA_DIR = Path(__file__).resolve().parent / "data"

STORES = [
    ("S1", "Lyon", "South", 2012),
    ("S2", "Paris", "North", 2008),
    ("S3", "Lille", "North", 2016),
    ("S4", "Marseille", "South", 2019),
    ("S5", "Nantes", "West", 2014),
    ("S6", "Rennes", "West", 2021),
]

PRODUCTS = [
    ("Espresso Beans", "Coffee", 12.50),
    ("Filter Coffee", "Coffee", 9.90),
    ("Green Tea", "Tea", 6.75),
    ("Earl Grey", "Tea", 5.40),
    ("Ceramic Mug", "Accessories", 8.00),
    ("French Press", "Accessories", 29.99),
    ("Milk Frother", "Accessories", 19.95),
    ("Chocolate Bar", "Snacks", 2.80),
    ("Almond Biscotti", "Snacks", 4.25),
]

WEATHER_CITIES = [("Lyon", 14.0), ("Lille", 10.0)]
COUNTRIES = ["France", "Germany", "Spain", "Italy", "Belgium"]


def write_csv(name, header, rows):
    DATA_DIR.mkdir(exist_ok=True)
    with open(DATA_DIR / name, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def optional(value, missing):
    return "" if missing else value


def make_stores():
    write_csv("stores.csv", ["store_id", "city", "region", "opened"], STORES)


def make_sales(rng, n_orders=48):
    start = datetime.date(2025, 1, 1)
    days = sorted(rng.randrange(181) for _ in range(n_orders))
    rows = []
    for index, offset in enumerate(days):
        product, category, price = rng.choice(PRODUCTS)
        store_id = rng.choice(STORES)[0]
        units = rng.randint(1, 12)
        rows.append([
            1001 + index,
            (start + datetime.timedelta(days=offset)).isoformat(),
            store_id,
            product,
            category,
            units,
            f"{price:.2f}",
        ])
    write_csv(
        "sales.csv",
        ["order_id", "date", "store_id", "product", "category", "units", "unit_price"],
        rows,
    )


def make_weather(rng, n_days=24):
    start = datetime.date(2025, 3, 18)
    missing_temp = set(rng.sample(range(n_days * len(WEATHER_CITIES)), 3))
    missing_precip = set(rng.sample(range(n_days * len(WEATHER_CITIES)), 4))
    rows = []
    for city_index, (city, base) in enumerate(WEATHER_CITIES):
        for day in range(n_days):
            row_index = city_index * n_days + day
            temp_max = base + day * 0.25 + rng.uniform(-3.0, 3.0)
            temp_min = temp_max - rng.uniform(5.0, 10.0)
            precip = 0.0 if rng.random() < 0.55 else rng.uniform(0.2, 14.0)
            rows.append([
                (start + datetime.timedelta(days=day)).isoformat(),
                city,
                optional(f"{temp_max:.1f}", row_index in missing_temp),
                f"{temp_min:.1f}",
                optional(f"{precip:.1f}", row_index in missing_precip),
            ])
    write_csv("weather.csv", ["date", "city", "temp_max_c", "temp_min_c", "precip_mm"], rows)


def make_survey(rng, n_respondents=40):
    missing_satisfaction = set(rng.sample(range(n_respondents), 5))
    missing_hours = set(rng.sample(range(n_respondents), 4))
    rows = []
    for index in range(n_respondents):
        satisfaction = rng.choices([1, 2, 3, 4, 5], weights=[1, 2, 4, 5, 3])[0]
        recommend = "yes" if rng.random() < 0.2 + 0.15 * satisfaction else "no"
        hours = rng.uniform(1.0, 20.0)
        rows.append([
            f"R{index + 1:03d}",
            rng.randint(18, 70),
            rng.choice(COUNTRIES),
            optional(satisfaction, index in missing_satisfaction),
            recommend,
            optional(f"{hours:.1f}", index in missing_hours),
        ])
    write_csv(
        "survey.csv",
        ["respondent", "age", "country", "satisfaction", "recommend", "hours_per_week"],
        rows,
    )


def main():
    rng = random.Random(SEED)
    make_stores()
    make_sales(rng)
    make_weather(rng)
    make_survey(rng)


if __name__ == "__main__":
    main()
