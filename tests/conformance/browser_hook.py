#!/usr/bin/env python3
"""A headless "browser" for tai's OAuth login (TAI_OAUTH_BROWSER): open the authorization
URL given as the last argument, and follow its redirect to tai's loopback listener, as a
person's browser would after the person approved the login."""
import sys
import urllib.error
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


opener = urllib.request.build_opener(NoRedirect)
try:
    opener.open(sys.argv[-1], timeout=20)
    sys.exit("the authorization endpoint did not redirect")
except urllib.error.HTTPError as e:
    location = e.headers.get("Location")
    if e.code not in (301, 302, 303, 307) or not location:
        sys.exit("the authorization endpoint answered %d without a redirect" % e.code)
urllib.request.urlopen(location, timeout=20).read()
