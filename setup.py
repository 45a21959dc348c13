"""Maps rules/, vendored_impls/ and property_tests/ into the dpcheck namespace."""
from setuptools import find_packages, setup

ROOTS = {
    "dpcheck": "dpcheck",
    "dpcheck.rules": "rules",
    "dpcheck.vendored_impls": "vendored_impls",
    "dpcheck.property_tests": "property_tests",
}

packages = []
for package, folder in ROOTS.items():
    packages.append(package)
    packages.extend(f"{package}.{sub}" for sub in find_packages(folder))

setup(packages=packages, package_dir=ROOTS)
