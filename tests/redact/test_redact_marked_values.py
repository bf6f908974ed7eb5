"""A value that opens with a bracket or a mark, where what it is part of says where it ends:
a connection string's part (to its ``;``), a URL's query parameter (to its ``&``), a .env
line's value (to its blank). A drawn password may open with any of its characters; code's
brackets after a name (a tuple, a list, a call's argument) stay."""

from __future__ import annotations

import pytest
from redact_samples import redacted

PASSWORD = "(_:MK4TbM_Vvywn8yg"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (
            'DATABASE_URL="Server=tcp:sql01.database.windows.net,1433;Database=app;'
            f'User ID=app;Password={PASSWORD};Encrypt=True;"',
            PASSWORD,
        ),
        (f"Server=db;Database=app;User ID=app;Password={PASSWORD};", PASSWORD),
        ("Driver={ODBC Driver 18};Server=db;UID=sa;PWD=[x8Kq2Lm9Zp4R;", "[x8Kq2Lm9Zp4R"),
        (
            "connecting to jdbc:postgresql://db:5432/shop?user=app&password=)oiVCyRqCo9aq ...",
            ")oiVCyRqCo9aq",
        ),
        ("https://x.example.com/login?user=a&token=]Xk9mP2vL8qR5&next=1", "]Xk9mP2vL8qR5"),
        ("SECRET_KEY=(p@8i#4a)ek+@ct)br4", "(p@8i#4a)ek+@ct)br4"),
    ],
)
def test_a_value_opening_with_a_bracket_is_masked_where_its_end_is_known(
    line: str, secret: str
) -> None:
    out = redacted(line + "\n")
    assert secret not in out and "[redacted:" in out


@pytest.mark.parametrize(
    "line",
    [
        "token=(a, b)",
        "key=[1, 2, 3]",
        "f(token=(x))",
        "opts = dict(password=(lambda: x))",
        "url?a=1&password=(short",
        "Server=db;Database=app;User ID=app;Password=(short;",
        "https://x.example.com/search?q=1&key=[tag]",
    ],
)
def test_code_and_short_values_after_a_name_are_left_alone(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"
