"""libczmq's zcert (through ctypes) and pyzmq's certificate reader, for the interop tests.

  zcert_peer.py save PATH [NAME=VALUE ...]   zcert_new, zcert_set_meta, zcert_save; prints the
                                             public key's Z85
  zcert_peer.py load PATH                    zcert_load; prints {"public", "secret", "meta"} as JSON
  zcert_peer.py pyzmq-load PATH              zmq.auth.load_certificate; prints {"public", "secret"}
  zcert_peer.py pyzmq-save DIR NAME [NAME=VALUE ...]
                                             zmq.auth.create_certificates; prints the public key
  zcert_peer.py check                        exits 0 when libczmq and pyzmq load
Exit status 1 when the library refuses the file.
"""
import ctypes
import json
import sys


def czmq():
    lib = ctypes.CDLL("libczmq.so.4")
    lib.zcert_new.restype = ctypes.c_void_p
    lib.zcert_load.restype = ctypes.c_void_p
    lib.zcert_load.argtypes = [ctypes.c_char_p]
    lib.zcert_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.zcert_set_meta.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.zcert_save.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    for name in ("zcert_public_txt", "zcert_secret_txt"):
        getattr(lib, name).restype = ctypes.c_char_p
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    lib.zcert_meta.restype = ctypes.c_char_p
    lib.zcert_meta.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.zcert_meta_keys.restype = ctypes.c_void_p
    lib.zcert_meta_keys.argtypes = [ctypes.c_void_p]
    lib.zlist_first.restype = ctypes.c_char_p
    lib.zlist_first.argtypes = [ctypes.c_void_p]
    lib.zlist_next.restype = ctypes.c_char_p
    lib.zlist_next.argtypes = [ctypes.c_void_p]
    lib.zlist_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return lib


def save(path, pairs):
    lib = czmq()
    cert = ctypes.c_void_p(lib.zcert_new())
    for pair in pairs:
        name, value = pair.split("=", 1)
        lib.zcert_set_meta(cert, name.encode(), b"%s", value.encode())
    if lib.zcert_save(cert, path.encode()) != 0:
        sys.exit(1)
    print(lib.zcert_public_txt(cert).decode())
    lib.zcert_destroy(ctypes.byref(cert))


def load(path):
    lib = czmq()
    handle = lib.zcert_load(path.encode())
    if not handle:
        sys.exit(1)
    cert = ctypes.c_void_p(handle)
    keys = ctypes.c_void_p(lib.zcert_meta_keys(cert))
    meta = {}
    name = lib.zlist_first(keys)
    while name is not None:
        meta[name.decode()] = lib.zcert_meta(cert, name).decode()
        name = lib.zlist_next(keys)
    lib.zlist_destroy(ctypes.byref(keys))
    print(json.dumps({"public": lib.zcert_public_txt(cert).decode(), "secret": lib.zcert_secret_txt(cert).decode(), "meta": meta}))
    lib.zcert_destroy(ctypes.byref(cert))


def pyzmq_save(directory, name, pairs):
    import zmq.auth
    public_file, _ = zmq.auth.create_certificates(directory, name, dict(pair.split("=", 1) for pair in pairs))
    print(zmq.auth.load_certificate(public_file)[0].decode())


def pyzmq_load(path):
    import zmq.auth
    public, secret = zmq.auth.load_certificate(path)
    print(json.dumps({"public": public.decode(), "secret": secret.decode() if secret else None}))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "check":
        czmq()
        import zmq.auth  # noqa: F401
        sys.exit(0)
    path = sys.argv[2]
    if command == "save":
        save(path, sys.argv[3:])
    elif command == "load":
        load(path)
    elif command == "pyzmq-save":
        pyzmq_save(path, sys.argv[3], sys.argv[4:])
    elif command == "pyzmq-load":
        pyzmq_load(path)
    else:
        sys.exit(2)
