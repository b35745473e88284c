"""Saved Terraform/OpenTofu plans: made, summarised as the plan contract, located in the .tf files (see README.md)."""
