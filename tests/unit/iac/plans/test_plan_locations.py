"""Which line declares a changed address: resource and data blocks, module calls, removed blocks; files that
are not regular (a symlink, a FIFO) are not read."""

from __future__ import annotations

import os

from iac_code.iac.plans.locations import address_locations, declaration_key

MAIN = """\
resource "aws_instance" "web" {
  ami = "x"
}

  data "aws_ami" "ubuntu" {}
module "vpc" {
  source = "./vpc"
}
removed {
  from = aws_s3_bucket.logs
  lifecycle { destroy = false }
}
"""


def test_declaration_keys():
    assert declaration_key('aws_instance.web["a"]') == ("resource", "aws_instance", "web")
    assert declaration_key("data.aws_ami.ubuntu") == ("data", "aws_ami", "ubuntu")
    assert declaration_key("module.vpc[0].module.sub.aws_subnet.a") == ("module", "vpc")


def test_each_change_points_at_its_block_once(tmp_path):
    (tmp_path / "main.tf").write_text(MAIN)
    (tmp_path / "other.tf").write_text('resource "aws_iam_role" "r" {}\n')
    changes = [
        ("aws_instance.web[0]", "replace"),
        ("aws_instance.web[1]", "replace"),
        ("module.vpc.aws_subnet.a", "create"),
        ("aws_s3_bucket.logs", "forget"),
        ("aws_iam_role.r", "update"),
        ("aws_gone.x", "delete"),
        ("data.aws_ami.ubuntu", "update"),
    ]
    found = address_locations(tmp_path, tmp_path, changes, 50)
    assert found == [
        (tmp_path / "main.tf", 1),
        (tmp_path / "main.tf", 6),
        (tmp_path / "main.tf", 10),
        (tmp_path / "other.tf", 1),
        (tmp_path / "main.tf", 5),
    ]
    assert address_locations(tmp_path, tmp_path, changes, 2) == found[:2]


def test_a_symlink_or_fifo_is_not_read(tmp_path):
    outside = tmp_path / "outside.tf"
    outside.write_text('resource "a" "b" {}\n')
    module = tmp_path / "ws"
    module.mkdir()
    (module / "link.tf").symlink_to(outside)
    os.mkfifo(module / "pipe.tf")
    assert address_locations(module, module, [("a.b", "create")], 50) == []


def test_a_module_in_a_subdirectory_is_read_relative_to_the_workspace(tmp_path):
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "main.tf").write_text('resource "a" "b" {}\n')
    assert address_locations(tmp_path, tmp_path / "net", [("a.b", "create")], 50) == [(tmp_path / "net" / "main.tf", 1)]
