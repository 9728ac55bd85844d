"""A skill's release: five gates in order (trigger, functional, policy, regression, human review), then
draft or published, with the approvals on record."""
