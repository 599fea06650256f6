// Starts Swagger UI on this server's schema. validatorUrl is off: the default would
// fetch a badge from the internet.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/schema/?format=json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
    docExpansion: "none",
    defaultModelsExpandDepth: 0,
    persistAuthorization: true,
    tryItOutEnabled: false
  });
});
