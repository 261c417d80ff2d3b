"""What serves the op families without being one: the argument checks every op function
gets (arguments.py), the forward-mode rules of the built-in ops (jvp.py) and the writer
of the editors' stubs (stub.py). A new op goes in a family file beside this folder."""
