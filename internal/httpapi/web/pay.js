document.querySelectorAll("[data-copy]").forEach(function (b) {
  b.addEventListener("click", function () {
    var t = document.getElementById(b.getAttribute("data-copy"));
    t.select();
    var done = function () { b.textContent = "Copiado!"; };
    if (navigator.clipboard) { navigator.clipboard.writeText(t.value).then(done, function () { document.execCommand("copy"); done(); }); }
    else { document.execCommand("copy"); done(); }
  });
});
