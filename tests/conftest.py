# Fixtures every test package may use: a throwaway PostgreSQL server and its databases; and terraform on PATH
# for the tests that run it (before any test module is imported, so their skip conditions see it too).
from tests.terraform_binary import put_terraform_on_path

pytest_plugins = ["tests.pg.fixtures"]
put_terraform_on_path()
