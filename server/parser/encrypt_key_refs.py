"""`KEY [db.]name` arguments (Doris's encrypt key references, `aes_encrypt(s, KEY my_key)`).

sqlglot cannot parse them; the statement text is rewritten before parsing into a call
`__encrypt_key('db', 'name')` (db '' for the current database), which keeps the parse
independent of the catalog (parsed trees are cached by text). The key's text is put in its
place per execution (server/handlers/session_values.py), so a key dropped or created again is
seen at once. A reference is the word KEY right after `(` or `,`, followed by a name (and
`.name`) that does not open a parenthesis (MySQL's `KEY idx (col)` in a column list is not
one).
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

FUNCTION = "__ENCRYPT_KEY"
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


def rewrite(text: str, tokens: list) -> str:
    out, pos, i = [], 0, 0
    while i < len(tokens):
        t = tokens[i]
        if t.text.upper() == "KEY" and i > 0 and \
                tokens[i - 1].token_type in (TokenType.COMMA, TokenType.L_PAREN):
            names, j = _name(tokens, i + 1)
            if names:
                db, name = names if len(names) == 2 else ("", names[0])
                out.append(text[pos:t.start])
                out.append(f"{FUNCTION.lower()}({_quote(db)}, {_quote(name)})")
                pos = tokens[j - 1].end + 1
                i = j
                continue
        i += 1
    return "".join(out) + text[pos:] if out else text


def _name(tokens: list, i: int) -> tuple[list[str], int]:
    """The one- or two-part name at tokens[i] and the index after it; ([], i) if none."""
    if i >= len(tokens) or tokens[i].token_type not in _NAMES:
        return [], i
    parts, j = [tokens[i].text], i + 1
    if j + 1 < len(tokens) and tokens[j].token_type == TokenType.DOT \
            and tokens[j + 1].token_type in _NAMES:
        parts.append(tokens[j + 1].text)
        j += 2
    if j < len(tokens) and tokens[j].token_type == TokenType.L_PAREN:
        return [], i
    return parts, j


def _quote(name: str) -> str:
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"
