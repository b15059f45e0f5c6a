document.querySelectorAll("[data-copy]").forEach(function (b) {
  b.addEventListener("click", function () {
    var t = document.getElementById(b.getAttribute("data-copy"));
    t.select();
    var done = function () { b.textContent = "Copiado!"; };
    if (navigator.clipboard) { navigator.clipboard.writeText(t.value).then(done, function () { document.execCommand("copy"); done(); }); }
    else { document.execCommand("copy"); done(); }
  });
});

// While the charge is pending, ask for its status (GET /pay/{id}/status)
// and reload the page once it changes, so the payer sees it paid or expired
// without doing anything. Every 3 s for the first 10 minutes, then every
// 15 s; at once when the tab comes back into view. Without JavaScript the
// page's <noscript> refresh does the same.
(function () {
  var main = document.querySelector("main[data-payment-id]");
  if (!main || main.getAttribute("data-status") !== "PENDING" || !window.fetch) { return; }
  var url = "/pay/" + encodeURIComponent(main.getAttribute("data-payment-id")) + "/status";
  var started = Date.now(), timer = null, busy = false;
  function next() {
    clearTimeout(timer);
    timer = setTimeout(poll, Date.now() - started < 600000 ? 3000 : 15000);
  }
  function poll() {
    if (busy) { return; }
    busy = true;
    fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (body) {
      busy = false;
      if (body && body.status && body.status !== "PENDING") { location.reload(); return; }
      next();
    }, function () { busy = false; next(); });
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { poll(); }
  });
  next();
})();
