"""Code that runs inside the warm worker processes. checkov's and cfn-lint's handlers use the standard
library and their tool only (they may run under checkov's own interpreter); the parse handler runs under
ours and calls into iac_code."""
