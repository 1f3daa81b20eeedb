"""pytester's in-process runs drop the modules they imported first, and pyarrow refuses a second registration of
datasets' extension types: `datasets` (read for .csv / .parquet suites) is loaded once, out here; and so is
SQLAlchemy (the run ledger's), whose compiled parts break its caches when its modules load a second time."""

import datasets  # noqa: F401
import sqlalchemy.sql  # noqa: F401
