"""Package layout for the wheel (metadata is in pyproject.toml): the package, its data files, and
the clone's boards/, templates/, kernels/ and samples/ mapped into it as cmx_gen/_share/<name>,
so an installed cmx-gen (pip, pipx) finds everything it reads (cmx_gen/common/paths.py)."""

from setuptools import find_packages, setup

SHARED = ("boards", "templates", "kernels", "samples")  # as cmx_gen/common/paths.py SHARED
# What a folder may hold that is not the tool's: build output, caches, editor litter.
LEFT_OUT = ["**/build/**", "**/__pycache__/**", "**/*.pyc", "**/.pytest_cache/**"]

setup(
    packages=find_packages(include=["cmx_gen", "cmx_gen.*"]) + [f"cmx_gen._share.{name}" for name in SHARED],
    package_dir={f"cmx_gen._share.{name}": name for name in SHARED},
    # "**/*" skips dot-folders: the apps' .github/workflows/ templates are named on their own
    package_data={
        "cmx_gen": ["data/**/*"],
        **{f"cmx_gen._share.{name}": ["**/*", "**/.github/workflows/*"] for name in SHARED},
    },
    exclude_package_data={"": LEFT_OUT},
    include_package_data=False,
)
