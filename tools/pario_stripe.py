"""pario stripe: show, join and split striped files (the stripe driver's layout).

A striped file is a small text record at the logical path naming the stripe
unit, the factor and the objects (src/io/driver/stripe.h); logical byte b is in
stripe s = b // unit, on object s % factor at offset (s // factor) * unit + b % unit.

  pario stripe info FILE                    the layout, object sizes, logical size
  pario stripe join FILE OUT                one plain file with the logical bytes
  pario stripe split PLAIN FILE --targets D1,D2,... [--unit U] [--factor F]
                                            a plain file striped over directories
"""
import hashlib
import os
import sys

MAGIC = "pario-stripe-layout 1\n"
DEFAULT_UNIT = 1 << 20  # IO_STRIPE_DEFAULT_UNIT
RECORD_MAX = 64 * 4200  # IO_STRIPE_RECORD_MAX
COPY_CHUNK = 8 << 20


class Layout:
    def __init__(self, unit, objects):
        self.unit = unit
        self.objects = list(objects)

    @property
    def factor(self):
        return len(self.objects)

    def logical_size(self):
        size = 0
        for i, path in enumerate(self.objects):
            n = os.path.getsize(path)
            if n:
                last = n - 1
                size = max(size, (last // self.unit * self.factor + i) * self.unit
                           + last % self.unit + 1)
        return size

    def record(self):
        return MAGIC + "unit %d\nfactor %d\n" % (self.unit, self.factor) + \
            "".join("object %s\n" % p for p in self.objects)


def read_layout(path):
    """The layout recorded at path, or None when path is a plain file."""
    if not os.path.isfile(path) or os.path.getsize(path) > RECORD_MAX:
        return None
    with open(path, "rb") as f:
        text = f.read()
    if not text.startswith(MAGIC.encode()):
        return None
    lines = text.decode().splitlines()
    unit = int(lines[1].split()[1])
    factor = int(lines[2].split()[1])
    objects = [line[len("object "):] for line in lines[3:3 + factor]]
    if len(objects) != factor or unit <= 0:
        raise ValueError("%s: malformed stripe layout record" % path)
    return Layout(unit, objects)


def copy_logical(layout, out):
    """Writes the logical bytes (holes as zeros) to the open binary file out."""
    size = layout.logical_size()
    handles = [open(p, "rb") for p in layout.objects]
    try:
        at = 0
        while at < size:
            stripe, inside = divmod(at, layout.unit)
            n = min(layout.unit - inside, size - at, COPY_CHUNK)
            f = handles[stripe % layout.factor]
            f.seek(stripe // layout.factor * layout.unit + inside)
            data = f.read(n)
            out.write(data + b"\0" * (n - len(data)))
            at += n
    finally:
        for f in handles:
            f.close()
    return size


def join(path, out_path):
    layout = read_layout(path)
    if layout is None:
        raise ValueError("%s is not a striped file" % path)
    tmp = out_path + ".joining"
    with open(tmp, "wb") as out:
        size = copy_logical(layout, out)
    os.replace(tmp, out_path)
    return size


def object_paths(path, targets, factor):
    """Objects named as the driver names them: base name, hash of the path, index."""
    absolute = os.path.join(os.path.realpath(os.path.dirname(path) or "."),
                            os.path.basename(path))
    tag = fnv1a32(absolute.encode())
    dirs = [os.path.realpath(t) for t in targets][:factor]
    return ["%s/%s.%08x.%d" % (d, os.path.basename(path), tag, i) for i, d in enumerate(dirs)]


def fnv1a32(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def split(plain, path, targets, unit, factor):
    for t in targets:
        if not os.path.isdir(t):
            raise ValueError("stripe target %s is not a directory" % t)
    layout = Layout(unit, object_paths(path, targets, factor or len(targets)))
    outs = [open(p, "wb") for p in layout.objects]
    try:
        with open(plain, "rb") as src:
            stripe = 0
            while True:
                data = src.read(unit)
                if not data:
                    break
                outs[stripe % layout.factor].write(data)
                stripe += 1
    finally:
        for f in outs:
            f.close()
    with open(path, "w") as f:
        f.write(layout.record())
    return layout


def info_text(path):
    layout = read_layout(path)
    if layout is None:
        return "%s: plain file, %d bytes" % (path, os.path.getsize(path))
    lines = ["%s: striped, unit %d, factor %d, logical size %d" % (
        path, layout.unit, layout.factor, layout.logical_size())]
    for i, p in enumerate(layout.objects):
        size = os.path.getsize(p) if os.path.exists(p) else None
        lines.append("  object %d: %s (%s)" % (i, p, "missing" if size is None else
                                              "%d bytes" % size))
    return "\n".join(lines)


def digest(path):
    """sha256 of the logical bytes of path (striped or plain)."""
    h = hashlib.sha256()
    layout = read_layout(path)

    class Sink:
        def write(self, b):
            h.update(b)
    if layout:
        copy_logical(layout, Sink())
    else:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(COPY_CHUNK), b""):
                h.update(chunk)
    return h.hexdigest()


def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="{info,join,split}")
    i = sub.add_parser("info", help="show a striped file's layout and sizes")
    i.add_argument("file")
    j = sub.add_parser("join", help="write a striped file's logical bytes as one plain file")
    j.add_argument("file")
    j.add_argument("out")
    s = sub.add_parser("split", help="stripe a plain file over target directories")
    s.add_argument("plain")
    s.add_argument("file", help="the striped file's path (its layout record)")
    s.add_argument("--targets", required=True, help="comma-separated directories")
    s.add_argument("--unit", type=int, default=DEFAULT_UNIT, help="stripe unit in bytes")
    s.add_argument("--factor", type=int, default=0, help="objects (default: one per target)")


def main(args):
    try:
        if args.action == "info":
            print(info_text(args.file))
        elif args.action == "join":
            print("%s: %d bytes" % (args.out, join(args.file, args.out)))
        elif args.action == "split":
            targets = [t for t in args.targets.split(",") if t]
            if args.unit <= 0 or not targets:
                raise ValueError("split needs a positive --unit and at least one target")
            layout = split(args.plain, args.file, targets, args.unit, args.factor)
            print("%s: unit %d over %d objects" % (args.file, layout.unit, layout.factor))
        else:
            print("pario stripe: info, join or split (pario stripe --help)", file=sys.stderr)
            return 2
    except (OSError, ValueError) as e:
        print("pario stripe: %s" % e, file=sys.stderr)
        return 1
    return 0
