"""Tests of promotion, learning, proposals, release, scorecard and categories."""
