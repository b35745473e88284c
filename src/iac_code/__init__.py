"""iac-code: an AI agent for infrastructure-as-code work, served over the Agent Client Protocol."""

__version__ = "0.1.0"
