"""Docstring parsing: Google, NumPy, reST; summary and description."""

from __future__ import annotations

from qlab.collection.docstrings import parse


def test_empty() -> None:
    doc = parse(None)
    assert (doc.summary, doc.description, doc.params) == ("", "", {})


def test_google_with_types_and_continuations() -> None:
    doc = parse(
        """Find members.

        Searches by name.
        Case-insensitive.

        Args:
            name (str): Part of the name,
                at least two letters.
            *args: ignored.
            limit: At most this many.

        Returns:
            dict: the members.
        """
    )
    assert doc.summary == "Find members."
    assert doc.description == "Searches by name.\nCase-insensitive."
    assert doc.params == {
        "name": "Part of the name, at least two letters.",
        "args": "ignored.",
        "limit": "At most this many.",
    }


def test_numpy_stops_at_the_next_section() -> None:
    doc = parse(
        """Track a delivery.

        Parameters
        ----------
        delivery_id : str
            The delivery.
        verbose : bool, optional
            More output.

        Returns
        -------
        list
            Events.
        """
    )
    assert doc.description == ""
    assert doc.params == {"delivery_id": "The delivery.", "verbose": "More output."}


def test_rest_fields() -> None:
    doc = parse(
        """Cancel an order.

        It cannot be undone.

        :param order_id: The order
            to cancel.
        :param bool force: Even if shipped.
        :returns: nothing
        """
    )
    assert doc.description == "It cannot be undone."
    assert doc.params == {"order_id": "The order to cancel.", "force": "Even if shipped."}
