"""The one exception type for mistakes a user can make (bad paths, files, configs).

Scripts catch it at the top, print a single `<script>: error: ...` line and exit
with code 2; any other exception is a bug and keeps its traceback.
"""


class UserError(Exception):
    pass


def one_line(text):
    """Collapses whitespace so that a message (ours or one quoted from torch/json)
    stays on the single line the scripts promise."""
    return " ".join(str(text).split())
