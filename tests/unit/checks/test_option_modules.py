"""The light list of the check kinds' options modules (`oracle.checks.OPTION_MODULES`, what the plugin declares in
every pytest session) says what the descriptors say (`CHECKS`), in their order; `--backend`'s help lists the
families the registry holds."""

from __future__ import annotations

from oracle.backends import backend_help
from oracle.checks import CHECKS, OPTION_MODULES
from oracle.backends.options import BACKEND_FAMILIES


def test_the_options_modules_are_the_descriptors_own_in_their_order():
    declared = [c for c in CHECKS if c.add_options is not None]
    assert [m.__name__ for m in OPTION_MODULES] == [f"oracle.checks.{c.name}.options" for c in declared]
    for module, check in zip(OPTION_MODULES, declared):
        assert module.add_options is check.add_options and module.settings_of is check.settings
        assert module.TITLE == check.title


def test_the_backend_help_names_every_registered_family():
    assert BACKEND_FAMILIES == backend_help()
