#!/usr/bin/python3
"""Packs a folder of images into MXNet's RecordIO files, as MXNet's tools/im2rec.py: first a list,
then the records.

    tools/im2rec/im2rec.py --list --recursive PREFIX ROOT   # PREFIX.lst: index, label, path
    tools/im2rec/im2rec.py PREFIX ROOT                      # PREFIX.rec and PREFIX.idx

With --recursive every sub-folder of ROOT is a class (labels 0, 1, ... in sorted order). The
records are ImageRecordIter's and MXNet's (`mx.io.ImageRecordIter(path_imgrec=PREFIX.rec, ...)`).
An image that cannot be read or decoded is named on stderr and left out; the exit status is then
1. Decoding, resizing and encoding run in --num-thread threads (libjpeg-turbo and libpng, without
Python's lock); records keep the list's order.
"""
import argparse
import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import mxplug as mx
from mxplug import _core


def list_image(root, recursive, exts):
    """(index, path relative to root, label) for each image, in sorted order."""
    i = 0
    if recursive:
        cat = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            files.sort()
            for fname in files:
                fpath = os.path.join(path, fname)
                if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                    if path not in cat:
                        cat[path] = len(cat)
                    yield (i, os.path.relpath(fpath, root), cat[path])
                    i += 1
        for k, v in sorted(cat.items(), key=lambda x: x[1]):
            print(os.path.relpath(k, root), v)
    else:
        for fname in sorted(os.listdir(root)):
            fpath = os.path.join(root, fname)
            if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                yield (i, os.path.relpath(fpath, root), 0)
                i += 1


def write_list(path_out, image_list):
    """One line per image: index, labels ('%f') and path, separated by tabs."""
    with _core.AtomicFile(path_out) as fout:
        for item in image_list:
            fout.write("%d\t" % item[0] + "".join("%f\t" % j for j in item[2:]) + "%s\n" % item[1])


def make_list(args):
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.seed(100)  # MXNet's seed: the same folder gives MXNet's list
        random.shuffle(image_list)
    n = len(image_list)
    chunk_size = (n + args.chunks - 1) // args.chunks
    for i in range(args.chunks):
        chunk = image_list[i * chunk_size:(i + 1) * chunk_size]
        str_chunk = "_%d" % i if args.chunks > 1 else ""
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            write_list(args.prefix + str_chunk + ".lst", chunk)
        else:
            if args.test_ratio:
                write_list(args.prefix + str_chunk + "_test.lst", chunk[:sep_test])
            if args.train_ratio + args.test_ratio < 1.0:
                write_list(args.prefix + str_chunk + "_val.lst", chunk[sep_test + sep:])
            write_list(args.prefix + str_chunk + "_train.lst", chunk[sep_test:sep_test + sep])


def read_list(path_in):
    """[index, path, label, ...] per line; a malformed line is named on stderr and skipped."""
    with open(path_in) as fin:
        for number, line in enumerate(fin, 1):
            fields = [f.strip() for f in line.strip().split("\t")]
            try:
                if len(fields) < 3:
                    raise ValueError("expected index, label(s) and path separated by tabs")
                yield [int(fields[0])] + [fields[-1]] + [float(f) for f in fields[1:-1]]
            except ValueError as e:
                print("im2rec: %s line %d skipped: %s" % (path_in, number, e), file=sys.stderr)


def encode(args, item):
    """The packed record of one list item; raises with the reason when the image is unusable."""
    fullpath = os.path.join(args.root, item[1])
    if len(item) > 3 and args.pack_label:
        header = mx.recordio.IRHeader(0, item[2:], item[0], 0)
    else:
        header = mx.recordio.IRHeader(0, item[2], item[0], 0)
    with open(fullpath, "rb") as fin:
        raw = fin.read()
    if args.pass_through:
        return mx.recordio.pack(header, raw)
    channels = {1: 3, 0: 1, -1: 0}[args.color]
    img = _core.imdecode(raw, channels, True)  # BGR, as cv2.imread gives MXNet's im2rec
    if args.center_crop:
        h, w = img.shape[:2]
        if h > w:
            img = img[(h - w) // 2:(h - w) // 2 + w]
        else:
            img = img[:, (w - h) // 2:(w - h) // 2 + h]
    if args.resize:
        h, w = img.shape[:2]
        if h > w:
            img = _core.imresize(np.ascontiguousarray(img), h * args.resize // w, args.resize)
        else:
            img = _core.imresize(np.ascontiguousarray(img), args.resize, w * args.resize // h)
    return mx.recordio.pack_img(header, np.ascontiguousarray(img), quality=args.quality, img_fmt=args.encoding)


def make_record(args, lst, working_dir):
    """Packs the images of list file `lst` into <name>.rec and <name>.idx; returns how many failed."""
    name = os.path.splitext(os.path.basename(lst))[0]
    print("Creating .rec file from", lst, "in", working_dir)
    record = mx.recordio.MXIndexedRecordIO(os.path.join(working_dir, name + ".idx"),
                                           os.path.join(working_dir, name + ".rec"), "w")

    def attempt(item):
        try:
            return encode(args, item), None
        except (OSError, ValueError, mx.MXNetError) as e:
            return None, e

    failed = packed = 0
    with ThreadPoolExecutor(max(1, args.num_thread)) as pool:
        items = list(read_list(lst))
        for item, (s, error) in zip(items, pool.map(attempt, items)):  # map keeps the list's order
            if s is None:
                print("im2rec: %s left out: %s" % (os.path.join(args.root, item[1]), error), file=sys.stderr)
                failed += 1
                continue
            record.write_idx(item[0], s)
            packed += 1
    record.close()
    print("im2rec: packed %d images into %s.rec%s" % (packed, os.path.join(working_dir, name),
                                                     ", left out %d" % failed if failed else ""))
    return failed


def parse_args(argv):
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                     description="Create an image list or make a record database by "
                                                 "reading from an image list")
    parser.add_argument("prefix", help="prefix of input/output lst and rec files.")
    parser.add_argument("root", help="path to folder containing images.")
    cgroup = parser.add_argument_group("Options for creating image lists")
    cgroup.add_argument("--list", action="store_true",
                        help="create image list(s) <prefix>.lst by traversing root instead of packing "
                             "the images of <prefix>*.lst into .rec files")
    cgroup.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"], help="image extensions")
    cgroup.add_argument("--chunks", type=int, default=1, help="number of chunks.")
    cgroup.add_argument("--train-ratio", type=float, default=1.0, help="ratio of images for training.")
    cgroup.add_argument("--test-ratio", type=float, default=0, help="ratio of images for testing.")
    cgroup.add_argument("--recursive", action="store_true",
                        help="walk sub-folders, one label per folder; otherwise only root's images, label 0")
    cgroup.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                        help="keep the sorted order in <prefix>.lst")
    rgroup = parser.add_argument_group("Options for creating database")
    rgroup.add_argument("--pass-through", action="store_true", help="pack the files' bytes as they are")
    rgroup.add_argument("--resize", type=int, default=0, help="resize the shorter edge to this size")
    rgroup.add_argument("--center-crop", action="store_true", help="crop the centre square")
    rgroup.add_argument("--quality", type=int, default=95,
                        help="JPEG quality 1-100, or PNG compression 0-9")
    rgroup.add_argument("--num-thread", type=int, default=1, help="threads that decode and encode")
    rgroup.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                        help="1: color (alpha dropped), 0: grayscale, -1: as stored")
    rgroup.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"], help="image encoding")
    rgroup.add_argument("--pack-label", action="store_true", help="pack all labels of a list line")
    args = parser.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv):
    args = parse_args(argv)
    if args.list:
        make_list(args)
        return 0
    working_dir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
    lists = sorted(os.path.join(working_dir, f) for f in os.listdir(working_dir)
                   if os.path.isfile(os.path.join(working_dir, f)))
    lists = [f for f in lists if f.startswith(args.prefix) and f.endswith(".lst")]
    if not lists:
        print("im2rec: no list file %s*.lst; make one with --list" % args.prefix, file=sys.stderr)
        return 2
    failed = sum(make_record(args, lst, working_dir) for lst in lists)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
