"""pytester's in-process runs drop the modules they imported first, and pyarrow refuses a second registration of
datasets' extension types: `datasets` (read for .csv / .parquet suites) is loaded once, out here."""

import datasets  # noqa: F401
