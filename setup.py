"""Packaging: the metadata and the package data are pyproject.toml's; this file only names the packages, found
rather than listed, so a new package under oracle/ (a check kind's) is installed without a line anywhere.
`oracle.canaries` and `oracle.prompts` are the top-level canaries/ and prompts/ folders (pyproject's
package-dir), which a search of oracle/ cannot find."""

from setuptools import find_packages, setup

MAPPED = ["oracle.canaries", "oracle.prompts"]


def packages() -> list[str]:
    return find_packages(include=["oracle", "oracle.*"]) + MAPPED


if __name__ == "__main__":
    setup(packages=packages())
