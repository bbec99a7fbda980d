// Unpack the embedded flame graphs (gzip + base64, to keep the page small)
// when their section is opened, and show each in a sandboxed frame. Nothing
// is fetched: the data is in this page.
(function () {
  "use strict";

  function fail(host, text) {
    host.classList.add("failed");
    host.textContent = text;
  }

  function show(box) {
    if (box.dataset.loaded) {
      return;
    }
    box.dataset.loaded = "1";
    var host = box.querySelector(".flamehost");
    var data = document.getElementById(box.dataset.flame);
    if (!host || !data) {
      return;
    }
    if (typeof DecompressionStream === "undefined") {
      fail(host, "This browser cannot unpack the embedded flame graph; open " +
           box.dataset.file + " instead.");
      return;
    }
    var raw = atob(data.textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) {
      bytes[i] = raw.charCodeAt(i);
    }
    var svg = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    new Response(svg).blob().then(function (blob) {
      var frame = document.createElement("iframe");
      frame.className = "flame";
      frame.title = box.dataset.title;
      frame.setAttribute("sandbox", "allow-scripts allow-modals");
      frame.style.height = host.dataset.height + "px";
      frame.src = URL.createObjectURL(new Blob([blob], {type: "image/svg+xml"}));
      host.replaceChildren(frame);
    }).catch(function (err) {
      fail(host, "Could not unpack the flame graph (" + err + "); open " +
           box.dataset.file + " instead.");
    });
  }

  document.querySelectorAll("details[data-flame]").forEach(function (box) {
    if (box.open) {
      show(box);
    }
    box.addEventListener("toggle", function () {
      if (box.open) {
        show(box);
      }
    });
  });
})();
