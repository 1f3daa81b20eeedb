"""The speed card: decode rates from token arrival times, their validity labels, and candidate vs reference."""
