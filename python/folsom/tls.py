"""tls_context=ssl.SSLContext, as pymemcache takes it, carried over to folsom's own TLS options.

folsom's connections use the C++ core's OpenSSL context, not Python's, so a context is read
back into tls_verify, tls_ca_file, tls_cert_file and tls_key_file:

- verify_mode CERT_REQUIRED (with check_hostname) verifies the chain and the name; CERT_NONE
  verifies nothing;
- the CA certificates it holds (get_ca_certs(): load_verify_locations' cafile or cadata) become
  a PEM file of the process's own; none: the system's trust store, as load_default_certs();
- the client certificate chain given to load_cert_chain() after ``import folsom`` (OpenSSL
  cannot hand a loaded key back, so folsom records the files it was loaded from).

A setting that cannot be carried over raises ValueError naming it, before anything is sent.
"""

import atexit
import os
import shutil
import ssl
import tempfile
import weakref

_cert_chains = weakref.WeakKeyDictionary()  # context -> (certfile, keyfile, password)
_ca_paths = weakref.WeakKeyDictionary()  # context -> capath given to load_verify_locations
_original_load_cert_chain = ssl.SSLContext.load_cert_chain
_original_load_verify_locations = ssl.SSLContext.load_verify_locations


def _load_cert_chain(self, certfile, keyfile=None, password=None):
    _original_load_cert_chain(self, certfile, keyfile, password)
    _cert_chains[self] = (os.fspath(certfile), os.fspath(keyfile) if keyfile else None, password)


def _load_verify_locations(self, cafile=None, capath=None, cadata=None):
    _original_load_verify_locations(self, cafile, capath, cadata)
    if capath is not None:
        _ca_paths[self] = os.fspath(capath)


# Recorded, not changed: each wrapper calls the original first.
ssl.SSLContext.load_cert_chain = _load_cert_chain
ssl.SSLContext.load_verify_locations = _load_verify_locations

_ca_dir = None


def _ca_file(ders):
    """A PEM file holding these CA certificates (one per distinct set, removed at exit)."""
    global _ca_dir
    if _ca_dir is None:
        _ca_dir = tempfile.mkdtemp(prefix="folsom-tls-")
        atexit.register(shutil.rmtree, _ca_dir, True)
    pem = "".join(ssl.DER_cert_to_PEM_cert(d) for d in ders)
    path = os.path.join(_ca_dir, "ca-%x.pem" % (hash(pem) & 0xFFFFFFFFFFFF))
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(pem)
        os.replace(path + ".tmp", path)
    return path


def _refuse(setting, why):
    raise ValueError("tls_context: %s cannot be carried over to folsom's TLS: %s" % (setting, why))


def options_from_context(ctx, explicit):
    """folsom's TLS options from an ssl.SSLContext; options given explicitly win."""
    if not isinstance(ctx, ssl.SSLContext):
        raise TypeError("tls_context must be an ssl.SSLContext, not %r" % type(ctx).__name__)
    if ctx.protocol == ssl.PROTOCOL_TLS_SERVER:
        _refuse("protocol=PROTOCOL_TLS_SERVER", "a client needs a client context")
    if ctx.verify_mode == ssl.CERT_OPTIONAL:
        _refuse("verify_mode=CERT_OPTIONAL",
                "folsom verifies the server (CERT_REQUIRED) or does not (CERT_NONE)")
    verify = ctx.verify_mode == ssl.CERT_REQUIRED
    if verify and not ctx.check_hostname and "tls_server_name" not in explicit:
        _refuse("check_hostname=False with CERT_REQUIRED",
                "folsom checks the chain and the name together (pass tls_server_name= to "
                "name the certificate's host, or use CERT_NONE)")
    if ctx.minimum_version not in (ssl.TLSVersion.MINIMUM_SUPPORTED, ssl.TLSVersion.TLSv1_2,
                                   ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        _refuse("minimum_version=%s" % ctx.minimum_version.name,
                "folsom uses OpenSSL's default range (TLS 1.2 and 1.3)")
    if ctx.maximum_version not in (ssl.TLSVersion.MAXIMUM_SUPPORTED, ssl.TLSVersion.TLSv1_3):
        _refuse("maximum_version=%s" % ctx.maximum_version.name,
                "folsom uses OpenSSL's default range (TLS 1.2 and 1.3)")
    if ctx.sni_callback is not None:
        _refuse("sni_callback", "folsom's connections do not run Python code")
    if getattr(ctx, "keylog_filename", None):
        _refuse("keylog_filename", "folsom's OpenSSL context does not log keys")
    if ctx in _ca_paths:
        _refuse("load_verify_locations(capath=%r)" % _ca_paths[ctx],
                "folsom takes one CA file (load the CA file with cafile=)")
    opts = {"tls": True, "tls_verify": verify}
    ders = ctx.get_ca_certs(binary_form=True)
    if ders:
        opts["tls_ca_file"] = _ca_file(ders)
    chain = _cert_chains.get(ctx)
    if chain is not None:
        certfile, keyfile, password = chain
        if password is not None:
            _refuse("load_cert_chain(password=...)",
                    "folsom reads an unencrypted private key file")
        opts["tls_cert_file"] = certfile
        opts["tls_key_file"] = keyfile or certfile
    for name, value in explicit.items():
        if name.startswith("tls"):
            opts[name] = value
    return opts
